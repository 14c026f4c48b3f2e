// The model picker in the chat header: the loaded model's name and facts; a click lists the
// library (name, architecture, quant, size, context) with "Open model file…" and details.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Arbor

Button {
    id: root
    objectName: "modelPicker"
    signal openModelRequested()
    signal detailsRequested(int row)

    flat: true
    Accessible.name: qsTr("Choose the model")
    ToolTip.visible: hovered && ChatController.modelError.length > 0
    ToolTip.text: ChatController.modelError
    onClicked: popup.opened ? popup.close() : popup.open()

    function showDetails() {
        popup.close()
        root.detailsRequested(ChatController.library.rowOfPath(ChatController.modelPath))
    }
    function openFile() {
        popup.close()
        root.openModelRequested()
    }

    contentItem: ColumnLayout {
        spacing: 0
        Label {
            objectName: "modelPickerName"
            Layout.fillWidth: true
            text: ChatController.modelState === "loading" ? qsTr("Loading %1…").arg(ChatController.modelName || qsTr("model"))
                : ChatController.modelState === "ready" ? ChatController.modelName
                : ChatController.modelState === "error" ? qsTr("Model failed to load") : qsTr("No model ▾")
            font.bold: true
            elide: Text.ElideRight
        }
        Label {
            objectName: "modelPickerSummary"
            Layout.fillWidth: true
            visible: text.length > 0
            text: ChatController.modelSummary
            font.pixelSize: 11
            opacity: 0.7
            elide: Text.ElideRight
        }
    }

    // Picking a model starts loading it: the list has done its job.
    Connections {
        target: ChatController
        function onModelChanged() {
            if (ChatController.modelState === "loading")
                popup.close()
        }
    }

    Popup {
        id: popup
        objectName: "modelPopup"
        y: root.height
        width: 420
        padding: 6
        ColumnLayout {
            width: popup.availableWidth
            spacing: 4
            ListView {
                id: list
                objectName: "modelList"
                Layout.fillWidth: true
                Layout.preferredHeight: Math.min(contentHeight, 320)
                clip: true
                model: ChatController.library
                delegate: ItemDelegate {
                    id: entry
                    required property int index
                    required property string modelName
                    required property string modelPath
                    required property string summaryText
                    required property bool missing
                    width: ListView.view.width
                    enabled: !entry.missing
                    highlighted: entry.modelPath === ChatController.modelPath
                    Accessible.name: qsTr("Use model %1").arg(entry.modelName)
                    onClicked: ChatController.selectModel(entry.modelPath)
                    contentItem: ColumnLayout {
                        spacing: 0
                        Label {
                            text: entry.modelName
                            font.bold: true
                            elide: Text.ElideRight
                            Layout.fillWidth: true
                        }
                        Label {
                            text: entry.summaryText
                            font.pixelSize: 11
                            opacity: 0.7
                            elide: Text.ElideRight
                            Layout.fillWidth: true
                        }
                    }
                }
            }
            Label {
                visible: list.count === 0
                text: qsTr("No models yet. Drop a .gguf file on the window.")
                opacity: 0.7
                Layout.margins: 8
            }
            MenuSeparator {
                Layout.fillWidth: true
            }
            Button {
                objectName: "modelDetailsButton"
                Layout.fillWidth: true
                flat: true
                visible: ChatController.modelPath.length > 0
                text: qsTr("Details of the current model…")
                Accessible.name: qsTr("Show the details of the current model")
                onClicked: root.showDetails()
            }
            Button {
                objectName: "openModelButton"
                Layout.fillWidth: true
                flat: true
                text: qsTr("Open model file… (Ctrl+O)")
                Accessible.name: qsTr("Open a model file")
                onClicked: root.openFile()
            }
        }
    }
}
