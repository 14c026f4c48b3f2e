// Settings: this chat's system prompt and sampler, and Arbor's global settings.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Arbor

Dialog {
    id: root
    objectName: "settingsDialog"
    title: qsTr("Settings")
    modal: true
    width: 560
    height: 560
    standardButtons: Dialog.Save | Dialog.Cancel

    onAboutToShow: chatSettings.load()
    onAccepted: chatSettings.save()

    ColumnLayout {
        anchors.fill: parent
        spacing: 8
        TabBar {
            id: tabs
            Layout.fillWidth: true
            TabButton {
                text: qsTr("This chat")
                Accessible.name: qsTr("Settings of this chat")
            }
            TabButton {
                text: qsTr("Arbor")
                Accessible.name: qsTr("Global settings")
            }
        }
        StackLayout {
            Layout.fillWidth: true
            Layout.fillHeight: true
            currentIndex: tabs.currentIndex
            ConversationSettings {
                id: chatSettings
            }
            GlobalSettings {}
        }
    }
}
