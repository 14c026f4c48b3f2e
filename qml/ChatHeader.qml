// Above the messages: the conversation's title, the model picker and the settings button.
import QtQuick
import QtQuick.Controls
import QtQuick.Dialogs
import QtQuick.Layouts
import Arbor

ToolBar {
    id: root
    objectName: "chatHeader"

    signal openModelRequested()
    signal settingsRequested()
    signal detailsRequested(int row)

    FileDialog {
        id: exportDialog
        title: qsTr("Export as Markdown")
        fileMode: FileDialog.SaveFile
        defaultSuffix: "md"
        nameFilters: [qsTr("Markdown (*.md)")]
        onAccepted: ChatController.exportMarkdown(selectedFile)
    }

    RowLayout {
        anchors.fill: parent
        anchors.leftMargin: 12
        anchors.rightMargin: 8
        spacing: 8

        Label {
            objectName: "conversationTitle"
            Layout.fillWidth: true
            text: ChatController.conversationTitle
            font.pixelSize: 16
            font.bold: true
            elide: Text.ElideRight
        }
        ModelPicker {
            Layout.maximumWidth: 420
            onOpenModelRequested: root.openModelRequested()
            onDetailsRequested: (row) => root.detailsRequested(row)
        }
        ToolButton {
            objectName: "exportButton"
            visible: ChatController.conversationId > 0
            text: "⇩"
            font.pixelSize: 16
            Accessible.name: qsTr("Export the conversation as Markdown")
            ToolTip.visible: hovered
            ToolTip.text: qsTr("Export the active branch as Markdown")
            onClicked: exportDialog.open()
        }
        ToolButton {
            objectName: "settingsButton"
            text: "⚙"
            font.pixelSize: 18
            Accessible.name: qsTr("Settings")
            ToolTip.visible: hovered
            ToolTip.text: qsTr("Chat and app settings (Ctrl+,)")
            onClicked: root.settingsRequested()
        }
    }
}
